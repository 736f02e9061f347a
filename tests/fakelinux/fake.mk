# A fake kernel build system that behaves like Kbuild where bringup cares:
#  - O=<dir> out-of-tree builds (2.6+ only; a 2.4 tree builds in place)
#  - *defconfig / *_config / tinyconfig write a .config
#  - olddefconfig (only when the tree has it: see scripts/kconfig/Makefile),
#    oldconfig (asks a question on stdin, like 2.4/2.6 trees do)
#  - dep (only on 2.4), zImage, Image, kernelrelease
#  - vmlinux is a real ELF made by $(CC) (CONFIG_FAKE_NOTELF: garbage); zImage is it gzipped
# Every invocation appends its targets and O= to $(objtree)/.fake-calls.
# A tree whose era.h says "broken" fails to build (an old tree that needs an era fix).
# Symbols Kconfig "knows" are listed in KNOWN; others are dropped by the config steps,
# which is how a real Kconfig drops a fragment's unknown or unmet symbols.
srctree := $(CURDIR)
objtree := $(if $(filter 4,$(PATCHLEVEL)),$(srctree),$(if $(O),$(O),$(srctree)))
CC ?= $(CROSS_COMPILE)gcc
KNOWN := CONFIG_FAKE_BASE CONFIG_FAKE_PRINTK CONFIG_FAKE_NET CONFIG_FAKE_BREAK CONFIG_FAKE_OFF CONFIG_FAKE_SLOW CONFIG_FAKE_NOTELF
HAVE_OLDDEFCONFIG := $(shell grep -q olddefconfig $(srctree)/scripts/kconfig/Makefile && echo y)
KRELEASE := $(VERSION).$(PATCHLEVEL).$(SUBLEVEL)$(EXTRAVERSION)

.PHONY: FORCE
$(shell mkdir -p $(objtree))
$(if $(filter _filter,$(MAKECMDGOALS)),,$(shell echo "$(MAKECMDGOALS) O=$(O)" >> $(objtree)/.fake-calls))
# the variables era fixes set, per invocation, in .fake-vars
$(if $(filter _filter,$(MAKECMDGOALS)),,$(shell echo '$(MAKECMDGOALS) KCFLAGS=[$(KCFLAGS)] CC=[$(CC)] LDFLAGS_BUILD_ID=$(origin LDFLAGS_BUILD_ID)[$(LDFLAGS_BUILD_ID)]' >> $(objtree)/.fake-vars))

%config: FORCE
	@case "$@" in \
	  oldconfig) \
	    printf 'New option FAKE_NEW (FAKE_NEW) [N/y/?] (NEW) '; \
	    read answer || { echo "oldconfig: no answer on stdin" >&2; exit 9; }; \
	    $(MAKE) -s -f $(srctree)/fake.mk _filter ;; \
	  olddefconfig) \
	    if [ "$(HAVE_OLDDEFCONFIG)" != y ]; then echo "*** No rule to make target 'olddefconfig'" >&2; exit 2; fi; \
	    $(MAKE) -s -f $(srctree)/fake.mk _filter ;; \
	  *) printf 'CONFIG_FAKE_BASE=y\n# CONFIG_FAKE_NET is not set\n' > $(objtree)/.config; \
	     echo "  written $@ to .config" ;; \
	esac

_filter:
	@grep -E '^(# )?($(shell echo $(KNOWN) | tr ' ' '|'))[= ]' $(objtree)/.config > $(objtree)/.config.new || true
	@mv $(objtree)/.config.new $(objtree)/.config
	@mkdir -p $(objtree)/include/config && echo $(KRELEASE) > $(objtree)/include/config/kernel.release

dep:
	@if [ "$(PATCHLEVEL)" != 4 ]; then echo "*** No rule to make target 'dep'" >&2; exit 2; fi
	@touch $(objtree)/.depend && echo "  dep done"

vmlinux: FORCE
	@test -f $(objtree)/.config || { echo "no .config" >&2; exit 1; }
	@if grep -q '^CONFIG_FAKE_BREAK=y' $(objtree)/.config; then echo "fake.c:1:1: error: broken on purpose" >&2; exit 2; fi
	@if grep -qs broken $(srctree)/era.h; then echo "era.h:1:1: error: this old tree needs its era fix" >&2; exit 2; fi
	@if [ "$(PATCHLEVEL)" = 4 ] && [ ! -f $(objtree)/.depend ]; then echo "2.4: run make dep first" >&2; exit 2; fi
	@if grep -q '^CONFIG_FAKE_SLOW=y' $(objtree)/.config; then echo "  CC      slow.o"; sleep 60; fi
	@echo "  CC      fake.o"
	@$(CC) -Os -c $(srctree)/fake.c -o $(objtree)/fake.o
	@echo "fake.c:2:3: warning: this is a fake kernel"
	@$(CC) -nostdlib -static -Wl,-e,fake_start -Wl,--build-id=none -o $(objtree)/vmlinux $(objtree)/fake.o
	@echo "  LD      vmlinux"

Image: vmlinux
	@mkdir -p $(objtree)/arch/$(ARCH)/boot
	@objcopy -O binary $(objtree)/vmlinux $(objtree)/arch/$(ARCH)/boot/Image

zImage: Image
	@gzip -n -9 -c $(objtree)/arch/$(ARCH)/boot/Image > $(objtree)/arch/$(ARCH)/boot/zImage
	@if grep -q '^CONFIG_FAKE_NOTELF=y' $(objtree)/.config; then echo 'not an ELF file' > $(objtree)/vmlinux; fi
	@echo "  Kernel: arch/$(ARCH)/boot/zImage is ready"

kernelrelease:
	@echo $(KRELEASE)
