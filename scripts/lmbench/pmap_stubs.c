/* The three portmapper functions lmbench's lib_tcp.c and lib_udp.c link against.
 * bench.h defines NO_PORTMAPPER: at run time the TCP and UDP benchmarks use fixed
 * ports (31233-31239) and only pmap_unset is ever called, its result ignored.  Static
 * libtirpc cannot be linked (it needs GSSAPI/krb5, which Debian ships no static
 * libraries of), so these answer "no portmapper" instead.  No header: their types
 * differ between glibc's old SunRPC and libtirpc, and the linker matches names only. */
struct sockaddr_in;

int pmap_set(unsigned long prog, unsigned long vers, int prot, int port)
{
	(void)prog, (void)vers, (void)prot, (void)port;
	return 0;
}

int pmap_unset(unsigned long prog, unsigned long vers)
{
	(void)prog, (void)vers;
	return 0;
}

unsigned short pmap_getport(struct sockaddr_in *addr, unsigned long prog, unsigned long vers, unsigned int prot)
{
	(void)addr, (void)prog, (void)vers, (void)prot;
	return 0;
}
