// kpg-expect: fail "c = a + b" first 3
// Bug: the guard stops one column early (x < width - 1), so the last column
// is never written and keeps its initial zeros; the first is row 0, column 3.

__global__ void matrix_add(const float *a, const float *b, float *c, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x; // column
    const int y = blockIdx.y * blockDim.y + threadIdx.y; // row
    if (x < width - 1 && y < height) {
        const int i = y * width + x;
        c[i] = a[i] + b[i];
    }
}
