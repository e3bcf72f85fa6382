// kpg-expect: fail "c = a + b" first 1
// Bug: a is read at the transposed index (row and column swapped), so only
// the diagonal is right; the first wrong element is row 0, column 1.

__global__ void matrix_add(const float *a, const float *b, float *c, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x; // column
    const int y = blockIdx.y * blockDim.y + threadIdx.y; // row
    if (x < width && y < height) {
        const int i = y * width + x;
        c[i] = a[x * width + y] + b[i];
    }
}
