// Which GPUs a job may use, by PCI address, from its visible-devices variables
// and the driver's list of GPUs (a test tree shaped like /proc/driver/nvidia/gpus).
#include "runner/job_gpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;

// Two GPUs, listed out of bus order by the directory.
struct DriverTree {
  test::ScratchDir dir;
  DriverTree() {
    add("0000:af:00.0", "GPU-bbbbbbbb-2222-3333-4444-555555555555");
    add("0000:3b:00.0", "GPU-aaaaaaaa-2222-3333-4444-555555555555");
  }
  void add(const std::string& pci, const std::string& uuid) {
    fs::create_directories(dir.path() / pci);
    std::ofstream(dir.path() / pci / "information")
        << "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 123\nGPU UUID: \t " << uuid
        << "\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nBus Location: \t " << pci << "\n";
  }
};

EnvGet env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JobGpus, TheDriversGpusInBusOrderWithTheirUuids) {
  DriverTree t;
  auto gpus = list_driver_gpus(t.dir.path().string());
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].pci, "0000:3b:00.0");
  EXPECT_EQ(gpus[0].uuid, "gpu-aaaaaaaa-2222-3333-4444-555555555555");
  EXPECT_EQ(gpus[1].pci, "0000:af:00.0");
  EXPECT_TRUE(list_driver_gpus("/nonexistent").empty());
}

TEST(JobGpus, IndicesAndUuidsNameGpus) {
  DriverTree t;
  auto gpus = list_driver_gpus(t.dir.path().string());
  auto r = resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "1"}}), gpus);
  EXPECT_EQ(r.pci, std::vector<std::string>{"0000:af:00.0"});
  EXPECT_EQ(r.source, "CUDA_VISIBLE_DEVICES=1");
  r = resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "GPU-AAAAAAAA-2222"}}), gpus);
  EXPECT_EQ(r.pci, std::vector<std::string>{"0000:3b:00.0"}) << "a unique prefix, any case";
  r = resolve_job_gpus(
      env_of({{"NVIDIA_VISIBLE_DEVICES", "MIG-GPU-bbbbbbbb-2222-3333-4444-555555555555/1/0"}}),
      gpus);
  EXPECT_EQ(r.pci, std::vector<std::string>{"0000:af:00.0"}) << "a MIG instance's parent";
  r = resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "0, 1"}}), gpus);
  EXPECT_EQ(r.pci, (std::vector<std::string>{"0000:3b:00.0", "0000:af:00.0"}));
}

TEST(JobGpus, CudaVisibleDevicesOutranksNvidiaVisibleDevices) {
  DriverTree t;
  auto gpus = list_driver_gpus(t.dir.path().string());
  auto r = resolve_job_gpus(
      env_of({{"CUDA_VISIBLE_DEVICES", "0"}, {"NVIDIA_VISIBLE_DEVICES", "all"}}), gpus);
  EXPECT_EQ(r.pci, std::vector<std::string>{"0000:3b:00.0"});
}

TEST(JobGpus, InAContainerTheRuntimesHostIndicesAreTheListedGpus) {
  DriverTree t;  // the two GPUs the runtime gave the container: the host's 4 and 6
  auto gpus = list_driver_gpus(t.dir.path().string());
  auto r = resolve_job_gpus(env_of({{"NVIDIA_VISIBLE_DEVICES", "4,6"}}), gpus);
  EXPECT_EQ(r.pci, (std::vector<std::string>{"0000:3b:00.0", "0000:af:00.0"}));
  EXPECT_TRUE(r.unresolved.empty());
}

TEST(JobGpus, NothingSetOrAllIsEveryGpuNoneIsNone) {
  DriverTree t;
  auto gpus = list_driver_gpus(t.dir.path().string());
  EXPECT_EQ(resolve_job_gpus(env_of({}), gpus).pci.size(), 2u);
  EXPECT_EQ(resolve_job_gpus(env_of({{"NVIDIA_VISIBLE_DEVICES", "all"}}), gpus).pci.size(), 2u);
  for (const char* none : {"", "none", "void"}) {
    auto r = resolve_job_gpus(env_of({{"NVIDIA_VISIBLE_DEVICES", none}}), gpus);
    EXPECT_TRUE(r.pci.empty()) << none;
  }
  EXPECT_TRUE(resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", ""}}), gpus).pci.empty());
}

TEST(JobGpus, WhatNamesNoListedGpuIsUnresolvedAndEndsTheList) {
  DriverTree t;
  auto gpus = list_driver_gpus(t.dir.path().string());
  // CUDA stops at the first entry it cannot use: "1" after "7" is not visible.
  auto r = resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "0,7,1"}}), gpus);
  EXPECT_EQ(r.pci, std::vector<std::string>{"0000:3b:00.0"});
  EXPECT_EQ(r.unresolved, std::vector<std::string>{"7"});
  r = resolve_job_gpus(
      env_of({{"CUDA_VISIBLE_DEVICES", "MIG-4f1a2b3c-0000-1111-2222-333344445555"}}), gpus);
  EXPECT_TRUE(r.pci.empty());
  EXPECT_EQ(r.unresolved.size(), 1u);
  r = resolve_job_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "GPU-"}}), gpus);
  EXPECT_TRUE(r.pci.empty()) << "an ambiguous prefix names no GPU";
}

}  // namespace
}  // namespace ckpt
