// Rotates an image through a texture object: the course example of texture
// memory (the technique of NVIDIA's simpleTexture sample). The texture has
// normalized coordinates, wrap addressing and linear filtering, so every
// output pixel is the bilinear blend of the four texels nearest its rotated
// position, and positions past an edge come back from the other side.

__global__ void rotateImage(float *out, int width, int height, float angle, cudaTextureObject_t image)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    // The pixel relative to the centre, turned by angle, in texture units (0..1 is the whole image).
    const float px = (float)x - (float)width / 2;
    const float py = (float)y - (float)height / 2;
    const float c = cosf(angle);
    const float s = sinf(angle);
    const float u = (px * c - py * s) / (float)width;
    const float v = (py * c + px * s) / (float)height;
    out[y * width + x] = tex2D<float>(image, u + 0.5f, v + 0.5f);
}
