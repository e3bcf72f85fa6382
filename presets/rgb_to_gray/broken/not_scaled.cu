// kpg-expect: fail "gray = luma of img" first 3
// Bug: the luma is not divided by 255, so gray is 0..255 instead of 0..1.
// The first pixels are black (0 either way); pixel 3 is the first that is not.

__global__ void rgb_to_gray(const uchar4 *img, float *gray, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const uchar4 p = img[y * width + x];
    gray[y * width + x] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
}
