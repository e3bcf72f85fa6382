// Trusted reference for the matrix multiply presets: one thread per element
// of C, the dot product accumulated in double and rounded once.

__global__ void matmul_reference(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        double sum = 0.0;
        for (int k = 0; k < K; ++k) {
            sum += double(A[row * K + k]) * double(B[k * N + col]);
        }
        C[row * N + col] = float(sum);
    }
}
