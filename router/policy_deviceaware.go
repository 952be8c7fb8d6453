package router

// ModeDeviceAwareWeighted is Dynamo's device-aware-weighted mode (RoutingPolicy::
// DeviceAwareWeighted, device_aware in lib/router-policy/src/lib.rs at 7654df8a). It splits the fleet into CPU and accelerator workers, keeps CPU
// workers' share of the load below DYN_ENCODER_CUDA_TO_CPU_RATIO (8) times less than the
// accelerators', and prefers a worker holding a request's whole multimodal embedding. A
// routerlab fleet is accelerators only and its traces carry no embeddings, so the policy is
// exactly its accelerator branch: the fewest requests in flight, ties drawn at random.
const ModeDeviceAwareWeighted Mode = "device_aware_weighted"

type deviceAware struct{ leastLoaded }
