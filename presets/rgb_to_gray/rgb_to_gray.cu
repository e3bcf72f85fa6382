// RGB to gray: one thread per pixel of an RGBA8 image (uchar4).
//
// The luma of ITU-R BT.601, 0.299 R + 0.587 G + 0.114 B, scaled from 0..255
// to 0..1 and written as a float image. A uchar4 is one 4-byte load with the
// channels in .x (red), .y (green), .z (blue) and .w (alpha).

__global__ void rgb_to_gray(const uchar4 *img, float *gray, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const uchar4 p = img[y * width + x];
    gray[y * width + x] = (0.299f * p.x + 0.587f * p.y + 0.114f * p.z) / 255.0f;
}
