// The trusted sort: one thread, insertion sort. Slow and obviously right.
__global__ void reference_sort(unsigned int *data, int n)
{
    for (int i = 1; i < n; ++i) {
        const unsigned int v = data[i];
        int j = i - 1;
        while (j >= 0 && data[j] > v) {
            data[j + 1] = data[j];
            --j;
        }
        data[j + 1] = v;
    }
}
