/*
 * mem_eat: allocate memory in chunks until allocation fails or the OOM killer
 * ends the process, touching every page so that the memory is really used.
 *
 *   mem_eat [chunk_kB]        (default 1024)
 *
 * After every chunk it prints the running total, unbuffered, so that whoever
 * reads the console knows the last value even when the OOM killer strikes:
 *
 *   mem_eat: total = 1048576 = 1024kB
 *   ...
 *   Got total = 9240576 = 9024kB          (only when malloc() fails)
 *
 * The last "total" line is what seed 002 calls "Available for malloc()".
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long chunk_kb = 1024, total = 0;
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	unsigned long i;

	if (argc > 1) {
		char *end;
		chunk_kb = strtoul(argv[1], &end, 0);
		if (*end || chunk_kb == 0) {
			fprintf(stderr, "usage: mem_eat [chunk_kB]\n");
			return 2;
		}
	}
	if (page <= 0)
		page = 4096;
	setvbuf(stdout, NULL, _IONBF, 0);
	for (;;) {
		p = malloc(chunk_kb * 1024);
		if (!p)
			break;
		for (i = 0; i < chunk_kb * 1024; i += page)
			p[i] = 1;
		total += chunk_kb * 1024;
		printf("mem_eat: total = %lu = %lukB\n", total, total / 1024);
	}
	printf("Got total = %lu = %lukB\n", total, total / 1024);
	return 0;
}
