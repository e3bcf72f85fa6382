// kpg-expect: fail "out is in transposed" first 1
// Bug: the tile is read row-wise, tile[threadIdx.y + j][threadIdx.x], on the
// way out. The tiles land in the right places but each one is not transposed
// inside: out[0][1] gets in[0][1] where in[1][0] belongs.

#define TILE 32
#define BLOCK_ROWS 8

__global__ void transpose_padded(const float *in, float *out, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < width && y + j < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
        }
    }
    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < height && y + j < width) {
            out[(y + j) * height + x] = tile[threadIdx.y + j][threadIdx.x];
        }
    }
}
