// kpg-expect: fail "image matches the reference" first 336
// Bug: the imaginary part of z^2 is zr * zi instead of 2 * zr * zi. Points
// that escape in the first iteration (z1 = c, |c| > 2) do not notice; in row
// 0 (im = -1.536) the first point with |c| <= 2 is x = 336 (re = -1.278).

__global__ void mandelbrot(float *out, int width, int height, float cx, float cy, float scale, int max_iter)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const float re = cx + (x - width * 0.5f) * scale;
    const float im = cy + (y - height * 0.5f) * scale;
    float zr = 0.0f, zi = 0.0f;
    int i = 0;
    while (i < max_iter && zr * zr + zi * zi <= 4.0f) {
        const float t = zr * zr - zi * zi + re;
        zi = zr * zi + im;
        zr = t;
        ++i;
    }
    float v = i;
    if (i < max_iter) {
        // Smooth colouring: a fractional iteration count from how far |z| escaped.
        v = i + 1.0f - log2f(log2f(sqrtf(zr * zr + zi * zi)));
    }
    out[y * width + x] = v;
}
