// kpg-expect: fail "cur after 32 generations matches the reference" first 0
// Bug: no wrap-around: neighbours outside the grid count as dead instead of
// coming from the opposite edge, so the border evolves differently.
// (The first index comes from simulating the 32 generations of the first
// seed on the host: cell 0 already differs.)

__device__ int cell(const unsigned char *cur, int x, int y, int width, int height)
{
    return (x < 0 || y < 0 || x >= width || y >= height) ? 0 : cur[y * width + x];
}

__global__ void life_step(const unsigned char *cur, unsigned char *next, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const int neighbours = cell(cur, x - 1, y - 1, width, height) + cell(cur, x, y - 1, width, height) +
                           cell(cur, x + 1, y - 1, width, height) + cell(cur, x - 1, y, width, height) +
                           cell(cur, x + 1, y, width, height) + cell(cur, x - 1, y + 1, width, height) +
                           cell(cur, x, y + 1, width, height) + cell(cur, x + 1, y + 1, width, height);
    const unsigned char alive = cur[y * width + x];
    next[y * width + x] = (neighbours == 3 || (alive && neighbours == 2)) ? 1 : 0;
}
