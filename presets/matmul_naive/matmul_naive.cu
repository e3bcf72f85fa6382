// Matrix multiply, naive: C = A * B with one thread per element of C.
//
// A is M x K, B is K x N, C is M x N, all stored row by row. Thread (x, y)
// computes row y, column x of C as the dot product of row y of A and column x
// of B, reading both straight from global memory: 2 K loads for 2 K flops.
// The sizes are not multiples of the block, so the guard matters.

__global__ void matmul_naive(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
