// Mandelbrot set: one thread per pixel of a 2-D image.
//
// Each thread maps its (x, y) pixel to a point c of the complex plane and
// iterates z = z^2 + c until |z| > 2 or max_iter is reached. The smooth
// iteration count is written as a float, for the image view's colormaps.

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
        zi = 2.0f * zr * zi + im;
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
