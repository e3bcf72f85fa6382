// Matrix multiply, tiled in shared memory: C = A * B.
//
// A is M x K, B is K x N, C is M x N, row by row. A block of TILE x TILE
// threads computes a TILE x TILE tile of C. It walks along K one tile at a
// time: every thread loads one element of A's tile and one of B's tile into
// shared memory, the block waits (__syncthreads) until both tiles are
// complete, and then each thread reads TILE values of each from shared memory.
// Every element loaded from global memory is used TILE times. The second
// __syncthreads keeps a fast thread from overwriting a tile that others are
// still reading. Loads past the edge of A or B fill in zeros, so M, N and K
// need not be multiples of TILE.
//
// TILE is a template parameter: the launch names the instantiation,
// "matmul_tiled<16>", and the block must be TILE x TILE.

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
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = sum;
    }
}

// The launch's name expression "matmul_tiled<16>" instantiates this one; add
// a line such as "template __global__ void matmul_tiled<32>(...)" only if you
// want to see the instantiation in the PTX without launching it.
