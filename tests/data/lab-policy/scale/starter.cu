// Exercise: out[i] = 3 * in[i] for i < n.
__global__ void scale(const int *in, int *out, int n)
{
}
