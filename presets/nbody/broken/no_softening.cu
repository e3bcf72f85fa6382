// kpg-expect: fail "pos matches the reference" first 0
// Bug: eps2 is left out. For j = i the distance is 0, rsqrtf(0) is infinity
// and 0 * infinity is NaN, so every body's acceleration is NaN from the
// first step on (and close pairs would fly apart even without it).

__global__ void nbody_step(const float4 *pos, float4 *pos_next, float4 *vel, const float *mass, int n, float dt,
                           float eps2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float4 q = pos[j];
        const float dx = q.x - p.x;
        const float dy = q.y - p.y;
        const float dz = q.z - p.z;
        const float r2 = dx * dx + dy * dy + dz * dz;
        const float inv_r = rsqrtf(r2);
        const float s = mass[j] * inv_r * inv_r * inv_r;
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    float4 v = vel[i];
    v.x += ax * dt;
    v.y += ay * dt;
    v.z += az * dt;
    vel[i] = v;
    pos_next[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
}

__global__ void clear_image(float *image, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        image[y * width + x] = 0.0f;
    }
}

// The view maps [-extent, extent] in x and y onto the image.
__global__ void draw_bodies(const float4 *pos, float *image, int n, int width, int height, float extent)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float4 p = pos[i];
    const int x = int((p.x / extent * 0.5f + 0.5f) * width);
    const int y = int((p.y / extent * 0.5f + 0.5f) * height);
    if (x >= 0 && x < width && y >= 0 && y < height) {
        atomicAdd(&image[y * width + x], 1.0f);
    }
}
