package ort

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef const char* (*ao_info_fn)(void);

// ao_library_strings dlopens attnopt's custom-op library (it needs nothing
// from ONNX Runtime to load) and copies what its build-info functions say
// (kernels/src/ort/build_info.cpp); a function the library lacks leaves ""
// (an older library). NULL on success, else a malloc'ed dlerror.
static char* ao_library_strings(const char* path, char** build, char** cpu) {
  void* lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return strdup(dlerror());
  ao_info_fn b = (ao_info_fn)dlsym(lib, "attnopt_ort_build_info");
  ao_info_fn c = (ao_info_fn)dlsym(lib, "attnopt_ort_cpu_info");
  *build = strdup(b ? b() : "");
  *cpu = strdup(c ? c() : "");
  return NULL;  // stays loaded: ONNX Runtime may register it in this process later
}

typedef int (*ao_cu_int_fn)(int*);
typedef int (*ao_cu_init_fn)(unsigned);
typedef int (*ao_cu_dev_fn)(int*, int);
typedef int (*ao_cu_name_fn)(char*, int, int);
typedef int (*ao_cu_attr_fn)(int*, int, int);

// ao_cuda_probe asks the CUDA driver (path: libcuda.so.1, found by Go in the
// system's library folders, never by name: see LocateCUDADriver) for its
// version and each device's compute capability, as the custom-op library's
// statically linked CUDA runtime would find them. Returns 0 when the driver
// answered; -1 when there is no driver library; else the CUresult of the
// call that failed. names gets up to max devices' names, 64 bytes each.
static int ao_cuda_probe(const char* path, int* version, int* count, int* sm, char* names, int max) {
  void* lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return -1;
  ao_cu_init_fn init = (ao_cu_init_fn)dlsym(lib, "cuInit");
  ao_cu_int_fn ver = (ao_cu_int_fn)dlsym(lib, "cuDriverGetVersion");
  ao_cu_int_fn cnt = (ao_cu_int_fn)dlsym(lib, "cuDeviceGetCount");
  ao_cu_dev_fn get = (ao_cu_dev_fn)dlsym(lib, "cuDeviceGet");
  ao_cu_name_fn name = (ao_cu_name_fn)dlsym(lib, "cuDeviceGetName");
  ao_cu_attr_fn attr = (ao_cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
  if (!init || !ver || !cnt || !get || !name || !attr) return -1;
  int r;
  if ((r = ver(version)) != 0) return r;
  if ((r = init(0)) != 0) return r;
  if ((r = cnt(count)) != 0) return r;
  for (int i = 0; i < *count && i < max; i++) {
    int dev, major = 0, minor = 0;
    if ((r = get(&dev, i)) != 0) return r;
    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR.
    if ((r = attr(&major, 75, dev)) != 0 || (r = attr(&minor, 76, dev)) != 0) return r;
    sm[i] = major * 10 + minor;
    if ((r = name(names + 64 * i, 64, dev)) != 0) return r;
  }
  return 0;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// LibraryContent is what attnopt's custom-op library can run: its CPU
// kernels' instruction sets and its CUDA code, read from the library.
type LibraryContent struct {
	// CUDA is the CUDA toolkit it was built with, "none" for a CPU-only build.
	CUDA string `json:"cuda"`
	// CUDAArchs: machine code (SASS) per architecture, "sm_90", and PTX,
	// "compute_90", which newer GPUs compile when they load it.
	CUDAArchs []string `json:"cuda_archs,omitempty"`
	// CPU tile kernels built in, those this processor can run, and the one in use.
	CPUISAs      []string `json:"cpu_isas,omitempty"`
	CPUSupported []string `json:"cpu_supported,omitempty"`
	CPUSelected  string   `json:"cpu_selected,omitempty"`
	Build        string   `json:"build_info"`
}

// ReadLibraryContent asks the library at path what it holds.
func ReadLibraryContent(path string) (LibraryContent, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var build, cpu *C.char
	if msg := C.ao_library_strings(cpath, &build, &cpu); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return LibraryContent{}, fmt.Errorf("%s does not load: %s", path, C.GoString(msg))
	}
	defer C.free(unsafe.Pointer(build))
	defer C.free(unsafe.Pointer(cpu))
	return parseLibraryContent(C.GoString(build), C.GoString(cpu)), nil
}

// parseLibraryContent reads attnopt_ort_build_info's "attnopt_ort
// cuda=13.0.88 archs=75-real,90" and attnopt_ort_cpu_info's
// "built=generic,avx2 supported=generic selected=generic" (CMake's
// architecture list: "75-real" is SASS only, "90" SASS and PTX, "90-virtual"
// PTX only).
func parseLibraryContent(build, cpu string) LibraryContent {
	c := LibraryContent{Build: build, CUDA: "none"}
	for _, f := range strings.Fields(build) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "cuda":
			c.CUDA = v
		case "archs":
			var ptx []string
			for _, a := range strings.Split(v, ",") {
				n, kind, _ := strings.Cut(a, "-")
				if kind != "virtual" {
					c.CUDAArchs = append(c.CUDAArchs, "sm_"+n)
				}
				if kind != "real" {
					ptx = append(ptx, "compute_"+n)
				}
			}
			c.CUDAArchs = append(c.CUDAArchs, ptx...)
		}
	}
	list := func(v string) []string {
		if v == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	for _, f := range strings.Fields(cpu) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "built":
			c.CPUISAs = list(v)
		case "supported":
			c.CPUSupported = list(v)
		case "selected":
			c.CPUSelected = v
		}
	}
	return c
}

// CUDAKernels is the library's CUDA content as one phrase: "none (a CPU-only
// build)" or "CUDA 13.0.88: sm_75, sm_90, compute_90".
func (c LibraryContent) CUDAKernels() string {
	if c.CUDA == "none" || c.CUDA == "" {
		return "none (a CPU-only build: its ops run on the CPU execution provider only)"
	}
	return "CUDA " + c.CUDA + ": " + strings.Join(c.CUDAArchs, ", ")
}

// CPUKernels is "generic, avx2, avx512 (this CPU: avx2)".
func (c LibraryContent) CPUKernels() string {
	if len(c.CPUISAs) == 0 {
		return "unknown (a library older than attnopt_ort_cpu_info)"
	}
	return strings.Join(c.CPUISAs, ", ") + " (this CPU: " + c.CPUSelected + ")"
}

// Kernels is both: "CPU kernels generic, avx2 (this CPU: avx2); CUDA
// kernels none (...)".
func (c LibraryContent) Kernels() string {
	return "CPU kernels " + c.CPUKernels() + "; CUDA kernels " + c.CUDAKernels()
}

// RunsOn says whether the library has code for a GPU of compute
// capability sm (86 for sm_86): its machine code, or PTX of an older
// architecture that the driver compiles.
func (c LibraryContent) RunsOn(sm int) bool {
	for _, a := range c.CUDAArchs {
		var n int
		if _, err := fmt.Sscanf(a, "sm_%d", &n); err == nil && n == sm {
			return true
		}
		if _, err := fmt.Sscanf(a, "compute_%d", &n); err == nil && n <= sm {
			return true
		}
	}
	return false
}

// CUDADevice is one GPU the driver reports.
type CUDADevice struct {
	Name string `json:"name"`
	SM   int    `json:"sm"` // compute capability, 90 for 9.0
}

// CUDAStatus is what the CUDA driver on this machine reports.
type CUDAStatus struct {
	Driver  string       `json:"driver,omitempty"` // "13.0"; empty without a driver
	Devices []CUDADevice `json:"devices"`
	Error   string       `json:"error,omitempty"`
}

// ProbeCUDA asks the CUDA driver at driver (LocateCUDADriver's path; ""
// when none was found) for its version and devices. It initialises the
// driver in this process.
func ProbeCUDA(driver string) CUDAStatus {
	const max = 16
	var version, count C.int
	var sm [max]C.int
	var names [max * 64]C.char
	s := CUDAStatus{Devices: []CUDADevice{}}
	if driver == "" {
		s.Error = "no CUDA driver (libcuda.so.1 not in the system library folders)"
		return s
	}
	cpath := C.CString(driver)
	defer C.free(unsafe.Pointer(cpath))
	r := C.ao_cuda_probe(cpath, &version, &count, &sm[0], &names[0], max)
	if r == -1 {
		s.Error = "no CUDA driver (" + driver + " does not load as one)"
		return s
	}
	if version > 0 {
		s.Driver = fmt.Sprintf("%d.%d", version/1000, version%1000/10)
	}
	if r != 0 {
		s.Error = fmt.Sprintf("the CUDA driver reports error %d (CUresult; 100: no device)", int(r))
		return s
	}
	for i := 0; i < int(count) && i < max; i++ {
		s.Devices = append(s.Devices, CUDADevice{Name: C.GoString(&names[i*64]), SM: int(sm[i])})
	}
	return s
}
