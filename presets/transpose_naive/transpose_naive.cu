// Matrix transpose, naive: out[x][y] = in[y][x].
//
// in is height rows of width floats; out is width rows of height floats.
// Thread (x, y) copies one element. The reads are coalesced (a warp reads 32
// consecutive floats of a row of in), but the writes are not: the 32 threads
// of a warp write 32 elements a whole row of out apart (stride height), so
// every write is its own memory transaction.

__global__ void transpose_naive(const float *in, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}
