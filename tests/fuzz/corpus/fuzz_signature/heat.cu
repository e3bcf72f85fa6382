// Heat diffusion on a 2-D plate: one explicit time step per launch.
//
// Each thread updates one cell from its four neighbours. The project repeats
// the step and swaps `t` and `t_next` after each repetition, so the next
// step reads what this one wrote (double buffering). The border is held fixed.

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
    t_next[i] = t[i] + alpha * lap;
}
