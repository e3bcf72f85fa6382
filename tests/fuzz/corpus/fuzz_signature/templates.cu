// name: ns::matmul<16, float>
#include <cstdint>
#define TILE 16
namespace ns {
/* a block comment with __global__ void fake(int x) {} inside */
template <int B = TILE, typename T = float>
__global__ void __launch_bounds__(256) matmul(const T *__restrict__ a, const T *__restrict__ b, T *c, int n)
{
    const char *s = "__global__ void notAKernel()";
    c[0] = a[0] * b[0] + s[0];
}
} // namespace ns
extern "C" __global__ void plain(float4 *v, half2 h, unsigned long long count, struct P { int x; } p) {}
__global__ void declared(int *p);
template <typename T, typename U = T> __global__ void k(U *p, T s, int &ref, int (*fn)(int)) {}
