# The real-kernel NFS tests under QEMU (tests/vm/README.md): one CTest test per
# scenario (vm_save_load, vm_mountstats, vm_throttle, vm_server_stop, vm_file_layer,
# vm_enospc, vm_calibrate: every tests/vm/scenarios/*.sh), each over both kernels (6.1, 6.12)
# and both NFS versions (3, 4.2), or those of its `# vm-nfs-versions:` header
# (file-layer: 4.2 only, one VM per kernel); `ctest -L vm` runs the whole matrix.
# Include from tests/CMakeLists.txt:
#     include(${PROJECT_SOURCE_DIR}/tests/vm/ctest.cmake)
# Run: ctest -L vm   (root for the first, cold-cache run: apt-get download/update)
# Needs the host packages listed in tests/vm/README.md; the download cache is
# ${CKPTSCOPE_VM_CACHE:-<source>/build-vm/cache}, the results land in
# <build>/vm-results/<scenario>/<kernel>-nfs<ver>-<scenario>/ (and results.txt).
file(GLOB _ckpt_vm_scenarios CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/vm/scenarios/*.sh)
foreach(_s IN LISTS _ckpt_vm_scenarios)
  get_filename_component(_name ${_s} NAME_WE)
  string(REPLACE "-" "_" _test vm_${_name})
  add_test(NAME ${_test}
           COMMAND ${PROJECT_SOURCE_DIR}/tests/vm/run.sh --kernel all --nfs all --scenario ${_name}
                   --out ${PROJECT_BINARY_DIR}/vm-results/${_name} --build ${PROJECT_BINARY_DIR})
  # Warm cache, 4 VMs: 45-60 s for most scenarios, ~100 s for server-stop
  # (each VM holds the server down 6 s), ~160 s for file-layer (2 VMs, its
  # clients' segment adds ~20 s to each boot); cold: +30 s of downloads.
  set_tests_properties(${_test} PROPERTIES LABELS vm TIMEOUT 900 RUN_SERIAL TRUE)
endforeach()
