// Trusted reference for aos_soa: the same step, one particle per thread,
// written plainly for both layouts (p is n rows of x, y, z, vx, vy, vz).

__global__ void move_reference(float *p, float *x, float *y, float *z, const float *vx, const float *vy,
                               const float *vz, int n, float dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float *row = p + 6 * i;
        row[0] = row[0] + row[3] * dt;
        row[1] = row[1] + row[4] * dt;
        row[2] = row[2] + row[5] * dt;
        x[i] = x[i] + vx[i] * dt;
        y[i] = y[i] + vy[i] * dt;
        z[i] = z[i] + vz[i] * dt;
    }
}
