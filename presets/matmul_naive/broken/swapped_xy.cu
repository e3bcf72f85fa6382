// kpg-expect: fail "C matches the reference" first 91200
// Bug: row and column come from the wrong grid axes. The grid has
// ceil(300 / 16) * 16 = 304 threads across (meant for the N = 300 columns), now
// used as rows, so rows 304 and below are never written: the first wrong
// element is row 304, column 0, flat index 304 * 300 = 91200.

__global__ void matmul_naive(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
