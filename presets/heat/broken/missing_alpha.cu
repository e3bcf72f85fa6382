// kpg-expect: fail "t after 50 steps matches the reference" first 277792
// Bug: the Laplacian is added without alpha (alpha = 1 > 0.25: unstable).
// Heat spreads one cell per step either way, so the first difference is at
// the top of the spread: the upper disc's top row (y = 321, x = 288..312)
// carried 50 rows up, where the correct value is about 100 * 0.24^50 and the
// broken one 100: row 271, column 288, index 271 * 1024 + 288.

__global__ void heat_step(const float *t, float *t_next, int width, int height, float alpha)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const int i = y * width + x;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        t_next[i] = t[i];
        return;
    }
    const float lap = t[i - 1] + t[i + 1] + t[i - width] + t[i + width] - 4.0f * t[i];
    t_next[i] = t[i] + lap;
}
