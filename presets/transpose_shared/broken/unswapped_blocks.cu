// kpg-expect: fail "out is in transposed" first 32
// Bug: the output tile is written at the block's own position (bx, by)
// instead of the swapped one (by, bx). Diagonal tiles come out right; the
// first wrong element is row 0, column 32 of out, written by block (1, 0).

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
    __syncthreads();

    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < height && y + j < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
