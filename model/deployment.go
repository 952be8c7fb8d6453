package model

// Deployment is one worker's hardware, parallel layout and vLLM engine arguments: everything
// the step-time and KV-capacity models depend on.
type Deployment struct {
	ModelName      string // e.g. MiniMaxAI/MiniMax-M2.5
	HardwareSKU    string // e.g. b200_sxm
	Backend        string // vllm
	BackendVersion string // e.g. 0.19.0

	TP          int // tensor parallel size of attention and dense layers
	AttentionDP int // attention data-parallel ranks (1 = none)
	MoETP       int // tensor parallel size inside each expert
	MoEEP       int // expert parallel size

	MaxNumBatchedTokens  int     // token budget of one step
	MaxNumSeqs           int     // running requests at most
	BlockSize            int     // engine KV block size in tokens
	GPUMemoryUtilization float64 // share of GPU memory vLLM may use
	ContextLength        int     // max model length (prompt + output)
	NumGPUBlocks         int     // KV blocks per worker; 0 = derive from memory
}
