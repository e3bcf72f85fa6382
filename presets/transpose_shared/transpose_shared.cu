// Matrix transpose through a shared-memory tile: both sides coalesced.
//
// A block of 32 x 8 threads moves a 32 x 32 tile; each thread copies 4
// elements (TILE / BLOCK_ROWS). The block reads the tile row by row from in
// (coalesced) into shared memory, waits for the whole tile, and writes it out
// row by row to out (coalesced again) reading the tile column by column. The
// output tile's position has the block indices swapped.
//
// The reads of a column of `tile` hit the same shared-memory bank 32 times
// (a 32-way bank conflict): transpose_padded removes that.

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

    // The same tile, transposed: block (bx, by) writes the tile at (by, bx).
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < height && y + j < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
