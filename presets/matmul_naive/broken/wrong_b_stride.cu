// kpg-expect: fail "C matches the reference" first 0
// Bug: B is indexed with K as its row length instead of N, so every element
// but the k = 0 term of each dot product reads the wrong part of B.

__global__ void matmul_naive(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * K + col];
        }
        C[row * N + col] = sum;
    }
}
