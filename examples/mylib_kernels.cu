// The example project's device code, built by cuparity_add_kernels (examples/CMakeLists.txt) into
// PTX and a cubin for every architecture and a fatbin, and registered as "mylib_kernels.*".
//
// The name and arguments are those of a kernel the simulated driver knows: it runs kernels by name,
// from CPU implementations of cuparity's own (tests/simdriver/src/kernels.cpp), so CI can launch
// this one without a GPU. On a GPU any name works.
extern "C" __global__ void cuparity_fill_u32(unsigned int *out, unsigned int value,
                                             unsigned long long n) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = value;
}
