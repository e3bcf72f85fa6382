// kpg-expect: fail "out is in transposed" first any
// Bug: no __syncthreads() between filling the tile and reading it. Each warp
// reads a column of the tile that the other warps of the block write: a
// race, so which elements come out wrong changes from run to run.

#define TILE 32
#define BLOCK_ROWS 8

__global__ void transpose_shared(const float *in, float *out, int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < width && y + j < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
        }
    }

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < height && y + j < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
