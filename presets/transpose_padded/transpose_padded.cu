// Matrix transpose through a padded shared-memory tile: no bank conflicts.
//
// The same kernel as transpose_shared with one change: each row of the tile
// is TILE + 1 floats long. Element [r][c] then sits in bank (r * 33 + c) % 32
// = (r + c) % 32, so the 32 elements of a column fall in 32 different banks
// and a warp reads a column of the tile in one go instead of 32.

#define TILE 32
#define BLOCK_ROWS 8

__global__ void transpose_padded(const float *in, float *out, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1]; // + 1: the padding column

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
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
