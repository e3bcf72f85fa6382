// kpg-expect: fail "cur after 32 generations matches the reference" first 0
// Bug: a live cell survives with 2 or more neighbours (>= 2 instead of == 2),
// so overcrowded cells never die.
// (The first index comes from simulating the 32 generations of the first
// seed on the host: cell 0 already differs.)

__global__ void life_step(const unsigned char *cur, unsigned char *next, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const int xl = (x + width - 1) % width;
    const int xr = (x + 1) % width;
    const int yu = (y + height - 1) % height;
    const int yd = (y + 1) % height;
    const int neighbours = cur[yu * width + xl] + cur[yu * width + x] + cur[yu * width + xr] +
                           cur[y * width + xl] + cur[y * width + xr] +
                           cur[yd * width + xl] + cur[yd * width + x] + cur[yd * width + xr];
    const unsigned char alive = cur[y * width + x];
    next[y * width + x] = (neighbours == 3 || (alive && neighbours >= 2)) ? 1 : 0;
}
