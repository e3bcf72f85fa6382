// Conway's Game of Life on a 512 x 512 torus: one generation per launch.
//
// A cell (1 alive, 0 dead) counts its eight neighbours, wrapping around the
// edges. A live cell with 2 or 3 live neighbours survives; a dead cell with
// exactly 3 becomes alive; every other cell is dead in the next generation.
// Every cell must see the same generation, so the kernel reads `cur` and
// writes `next`, and the project swaps the two after each launch.

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
    next[y * width + x] = (neighbours == 3 || (alive && neighbours == 2)) ? 1 : 0;
}
