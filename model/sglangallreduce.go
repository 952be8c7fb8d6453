package model

import "math"

// SGLang's custom all-reduce picks its kernel by message size (issue 34).
//
// CustomAllreduce::allreduce (sgl-kernel/csrc/allreduce/custom_all_reduce.cuh at 0bb5d5e9,
// vLLM's rule) runs cross_device_reduce_1stage on 2 GPUs always and on 4 fully connected GPUs
// below 512 KB, on 6 and 8 below 256 KB, and cross_device_reduce_2stage from there.
// AIConfigurator's collector sizes its messages in elements, doubling
// (collector/network/collect_all_reduce.py, get_input_shape_and_comm_size), so on 8 GPUs its
// BF16 rows at 64 K elements (128 KB) and 128 K (256 KB) are one kernel and the other, and a
// message between them interpolated across the two prices one-stage work at two-stage cost:
// H200's 0.5.9 graph rows jump from 7.8 to 14.0 µs there, where the one-stage rows grow by
// 1.4 µs a 32 K elements from 16 K up. A message is priced from the rows of the kernel that
// runs it: above the last one-stage row it continues that row's last measured segment, up to
// the switch.

// customAllReduceTwoStageBytes is the message size from which SGLang's custom all-reduce
// runs its two-stage kernel on gpus fully connected GPUs (+Inf: never).
func customAllReduceTwoStageBytes(gpus int) float64 {
	switch {
	case gpus <= 2:
		return math.Inf(1)
	case gpus <= 4:
		return 512 << 10
	}
	return 256 << 10
}

// stagedAllReduce prices a message of x elements of elemBytes each from the rows s of the
// side of the switch it falls on.
func stagedAllReduce(s series, gpus int, elemBytes float64) func(x float64) float64 {
	at := func(x float64) float64 { return s.at(x, 1) }
	sw := customAllReduceTwoStageBytes(gpus) / elemBytes
	var one, two series
	for _, p := range s {
		if p.x < sw {
			one = append(one, p)
		} else {
			two = append(two, p)
		}
	}
	if len(one) < 2 || len(two) == 0 {
		return at
	}
	last, prev := one[len(one)-1], one[len(one)-2]
	slope := (last.us - prev.us) / (last.x - prev.x)
	return func(x float64) float64 {
		switch {
		case x >= sw:
			return two.at(x, 1)
		case x > last.x:
			return last.us + slope*(x-last.x)
		}
		return one.at(x, 1)
	}
}
