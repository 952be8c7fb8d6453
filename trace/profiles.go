package trace

// The conversation profile is fitted to the Mooncake FAST'25 conversation trace
// (kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl, Apache-2.0): each table
// is an empirical quantile function measured on it at the probabilities convP. Every request
// there starts with the same 512-token block (one shared system prompt); a session's later
// turns reuse the previous turn's full blocks (82 %), branch off early in it (15 %) or repeat
// it (2.5 %); requests arrive in 3-second sampling ticks.
var convP = []float64{0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1}

func conversationProfile() profile {
	return profile{
		requests:  12031,
		spanMS:    3_537_000,
		tickMS:    3000,
		families:  []family{{blocks: 1, weight: 1}},
		firstUser: quantiles{convP, []float64{379, 383, 385, 393, 431, 580, 824, 1245, 2255, 3402, 4075, 4752, 5679, 6905, 8316, 10256, 12544, 15359, 18921, 25049, 37952, 66700, 89355, 111093, 125683}},
		output:    quantiles{convP, []float64{1, 3, 10, 24, 46, 100, 157, 213, 256, 291, 323, 350, 375, 399, 423, 447, 472, 504, 543, 597, 698, 891, 1120, 1570, 2000}},
		appended:  quantiles{convP, []float64{-1197, -60, -16, -3, 6, 8, 10, 12, 15, 21, 26, 34, 59, 136, 306, 533, 1457, 3310, 4138, 5521, 8616, 14224, 20562, 33064, 91467}},
		// Later turns add less (the real trace's depth-2+ growth); the tail above p80 is scaled
		// by 0.6 so that deep turns stay as long as the real ones (≈14k tokens).
		appendedLater: quantiles{convP, []float64{-447, -14, -5, 5, 7, 8, 10, 11, 13, 15, 19, 23, 29, 40, 58, 90, 145, 200, 350, 1250, 3200, 5500, 8100, 10300, 23300}},
		// Retries are likelier on short prompts; branches (a chat front end trimming the
		// history to its recent part) on prompts of 8k–32k tokens.
		pRepeat:    steps{[]int{2048, 4096}, []float64{0.073, 0.033, 0.015}},
		pBranch:    steps{[]int{4096, 8192, 16384, 32768, 65536}, []float64{0.01, 0.054, 0.262, 0.31, 0.19, 0.126}},
		branchKeep: quantiles{convP, []float64{0.015, 0.037, 0.054, 0.07, 0.086, 0.1, 0.115, 0.133, 0.156, 0.176, 0.194, 0.222, 0.261, 0.3, 0.355, 0.41, 0.469, 0.55, 0.7, 0.895, 0.944, 0.963, 0.978, 0.983, 0.993}},
		branchTail: quantiles{convP, []float64{10, 621, 896, 1789, 3803, 4995, 5790, 7013, 7918, 8540, 8939, 9567, 10178, 10946, 11986, 13687, 14851, 15905, 17377, 19886, 26313, 31216, 39271, 48383, 94968}},
		// P(another turn) by turn, at pace 1: from the turn counts of sessions that start in
		// the first 40 % of the real trace, adjusted so that about as many requests continue
		// a session (≈4.5k of 12k) at a similar prefix-cache ratio.
		cont: []float64{0.36, 0.45, 0.55, 0.64, 0.66, 0.72, 0.8},
		// Turn gaps of the real trace ×1.2: brisk sessions (pace < 1) are the long ones, and
		// with them the parent-to-child distance in requests matches the real one (median ≈ 425).
		gapMS:     quantiles{convP, []float64{3001, 25000, 40000, 54000, 65000, 76000, 86000, 97000, 112000, 126000, 144000, 162000, 191000, 223000, 266000, 320000, 382000, 454000, 544000, 662000, 979000, 1822000, 2434000, 2754000, 3636000}},
		burst:     quantiles{[]float64{0, 1}, []float64{1, 1}},
		rateSigma: 0.1,
		// Long sessions are brisk ones (real: median gap 105 s in sessions of ≥ 10 turns, 132 s
		// in sessions of ≤ 3), and long first prompts (documents) rarely get a second turn.
		paceSigma:      0.4,
		paceStop:       0.5,
		firstContScale: steps{[]int{32768, 65536}, []float64{1, 0.81, 0.56}},
		rateRho:        0.5,
		meanTurns:      1.6,
		maxContext:     131072,
		maxFirstUser:   126000,
	}
}

// The toolagent profile matches the published statistics of the Mooncake FAST'25 toolagent
// trace (Table 2: 23,608 requests in one hour, mean input 8,596 and output 182 tokens, 59 %
// prefix-cache ratio, 512-token blocks) with the structure of agent traffic: a handful of
// long system prompts with tool definitions, each shared verbatim by many sessions; agent
// loops whose every step appends the model's tool call and the tool's result to the context
// and comes back within seconds; session starts that come in bursts (fan-out jobs) on a
// rate that drifts minute to minute.
var agentP = []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99, 1}

func toolagentProfile() profile {
	return profile{
		requests: 23608,
		spanMS:   3_600_000,
		families: []family{
			{blocks: 3, weight: 0.30}, {blocks: 4, weight: 0.24}, {blocks: 6, weight: 0.17},
			{blocks: 8, weight: 0.12}, {blocks: 10, weight: 0.08}, {blocks: 13, weight: 0.06},
			{blocks: 16, weight: 0.03},
		},
		firstUser:     quantiles{agentP, []float64{40, 420, 1050, 2050, 4150, 7600, 13000, 25000, 118000}},
		output:        quantiles{agentP, []float64{1, 18, 50, 112, 225, 390, 650, 1000, 2000}},
		appended:      quantiles{agentP, []float64{5, 80, 320, 950, 2400, 4800, 9500, 16000, 45000}},
		appendedLater: quantiles{agentP, []float64{5, 80, 320, 950, 2400, 4800, 9500, 16000, 45000}},
		pRepeat:       always(0.02),
		pBranch:       always(0.03),
		branchKeep:    quantiles{[]float64{0, 1}, []float64{0.1, 0.9}},
		branchTail:    quantiles{agentP, []float64{20, 150, 400, 900, 2200, 5000, 10000, 20000, 60000}},
		cont:          []float64{0.43},
		// Turn gaps of the real trace ×1.2: brisk sessions (pace < 1) are the long ones, and
		// with them the parent-to-child distance in requests matches the real one (median ≈ 425).
		gapMS:          quantiles{agentP, []float64{300, 1200, 2500, 5000, 10000, 22000, 45000, 90000, 300000}},
		burst:          quantiles{[]float64{0, 0.85, 0.95, 0.99, 1}, []float64{1, 1.99, 4, 10, 20}},
		rateSigma:      0.35,
		rateRho:        0.8,
		meanTurns:      3.3,
		maxContext:     131072,
		maxFirstUser:   100000,
		firstContScale: always(1),
	}
}
