// kpg-expect: fail "C matches the reference" first any
// Bug: both __syncthreads() are gone. A warp reads tile elements that other
// warps have not loaded yet, or that they already overwrote with the next
// tile: a race, so which elements come out wrong changes from run to run.

template <int TILE>
__global__ void matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;

    float sum = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        for (int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
    }
    if (row < M && col < N) {
        C[row * N + col] = sum;
    }
}
