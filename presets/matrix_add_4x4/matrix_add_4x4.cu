// Matrix addition of two 4x4 float matrices: C = A + B, one thread per element.
//
// The classic first GPU program: one block of 4 x 4 threads, thread (x, y)
// adds element (row y, column x). The matrices are stored row by row, so the
// element's flat index is y * width + x. The guard keeps the kernel right for
// any grid that covers the matrix, not only for exactly one 4 x 4 block.

__global__ void matrix_add(const float *a, const float *b, float *c, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x; // column
    const int y = blockIdx.y * blockDim.y + threadIdx.y; // row
    if (x < width && y < height) {
        const int i = y * width + x;
        c[i] = a[i] + b[i];
    }
}
