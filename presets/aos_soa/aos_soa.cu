// One step of motion, x += v dt, for n particles stored two ways.
//
// move_aos: an array of structs. Thread i reads p[i].x, then p[i].y, ...:
// the 32 threads of a warp read floats 24 bytes apart, 768 bytes in all,
// for 128 bytes they use: 24 sectors per request, ideal 4.
//
// move_soa: a struct of arrays. Thread i reads x[i], then y[i], ...: 32
// neighbouring floats per request, 4 sectors.

struct Particle {
    float x, y, z;
    float vx, vy, vz;
};

__global__ void move_aos(Particle *p, int n, float dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
    }
}

__global__ void move_soa(float *x, float *y, float *z, const float *vx, const float *vy, const float *vz, int n,
                         float dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
        z[i] += vz[i] * dt;
    }
}
