/* The whole "kernel" of the fake tree: some text, rodata, data and bss. */
static const char banner[] = "Linux version fake (bringup@bringup)";
int counter = 42;
int table[64] = { 1, 2, 3 };
static char scratch[4096];

void fake_start(void)
{
	for (;;) {
		scratch[counter & 4095] = banner[counter % sizeof(banner)];
		counter += table[counter & 63];
	}
}
