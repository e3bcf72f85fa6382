// Trusted reference for game_of_life: the rules spelled out with loops over
// the 3 x 3 neighbourhood, wrapping with explicit ifs.

__global__ void life_step(const unsigned char *cur, unsigned char *next, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    int live = 0;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            if (dx == 0 && dy == 0) {
                continue;
            }
            int xx = x + dx;
            int yy = y + dy;
            if (xx < 0) {
                xx += width;
            }
            if (xx >= width) {
                xx -= width;
            }
            if (yy < 0) {
                yy += height;
            }
            if (yy >= height) {
                yy -= height;
            }
            live += cur[yy * width + xx] != 0;
        }
    }
    unsigned char result = 0;
    if (cur[y * width + x] != 0) {
        result = (live == 2 || live == 3) ? 1 : 0;
    } else {
        result = live == 3 ? 1 : 0;
    }
    next[y * width + x] = result;
}
