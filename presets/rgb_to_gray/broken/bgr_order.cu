// kpg-expect: fail "gray = luma of img" first 3
// Bug: the channels are taken in BGR order (red's weight on blue and blue's
// on red). Pixels 0 to 2 are black (R = G = B = 0 there) and come out right;
// pixel 3 has R = 1, B = 0.

__global__ void rgb_to_gray(const uchar4 *img, float *gray, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const uchar4 p = img[y * width + x];
    gray[y * width + x] = (0.299f * p.z + 0.587f * p.y + 0.114f * p.x) / 255.0f;
}
