// Trusted reference for texture_rotate: the same rotation, with the texture
// unit's wrap addressing and bilinear filtering written out over global
// memory (texel centres at i + 0.5, weights from the fractional part).

__global__ void rotateReference(const float *img, float *out, int width, int height, float angle)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const float px = (float)x - (float)width / 2;
    const float py = (float)y - (float)height / 2;
    const float c = cosf(angle);
    const float s = sinf(angle);
    float u = (px * c - py * s) / (float)width + 0.5f;
    float v = (py * c + px * s) / (float)height + 0.5f;
    // Wrap: only the fractional part of a normalized coordinate counts.
    u -= floorf(u);
    v -= floorf(v);
    const float tx = u * width - 0.5f;
    const float ty = v * height - 0.5f;
    const float fx = floorf(tx);
    const float fy = floorf(ty);
    const double a = tx - fx;
    const double b = ty - fy;
    const int x0 = ((int)fx % width + width) % width;
    const int y0 = ((int)fy % height + height) % height;
    const int x1 = (x0 + 1) % width;
    const int y1 = (y0 + 1) % height;
    const double top = (1 - a) * img[y0 * width + x0] + a * img[y0 * width + x1];
    const double bottom = (1 - a) * img[y1 * width + x0] + a * img[y1 * width + x1];
    out[y * width + x] = (float)((1 - b) * top + b * bottom);
}
