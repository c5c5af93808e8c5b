#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	size_t n = strtoul(argv[1], 0, 0), passes = strtoul(argv[2], 0, 0);
	volatile unsigned char *a = aligned_alloc(4096, n);
	unsigned long s = 0;
	for (size_t i = 0; i < n; i += 64) a[i] = 1;
	for (size_t p = 0; p < passes; p++)
		for (size_t i = 0; i < n; i += 64) s += a[i];
	printf("%lu\n", s);
	return 0;
}
