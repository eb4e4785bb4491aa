// One test per row of docs/frameworks.md: each framework's save sequence, with
// the file names its source writes (research in docs/frameworks.md), through
// the default rules. Every bulk file must count; small metadata that is text
// (`*.json`, `*.yaml`) does not, and where a row has a file the rules cannot
// see at write time, the test says so (the gap is documented there too).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/checkpoint_matcher.h"

namespace ckpt {
namespace {

class FrameworkLayoutTest : public ::testing::Test {
 protected:
  void expect_checkpoints(const std::vector<std::string>& paths) {
    for (const auto& path : paths)
      EXPECT_TRUE(matcher_.is_checkpoint_file(path)) << path << " should be a checkpoint file";
  }
  void expect_not_checkpoints(const std::vector<std::string>& paths) {
    for (const auto& path : paths)
      EXPECT_FALSE(matcher_.is_checkpoint_file(path)) << path << " should not be a checkpoint file";
  }

  CheckpointMatcher matcher_{Config::defaults().checkpoint};
};

// karpathy/nanoGPT train.py: torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt')).
TEST_F(FrameworkLayoutTest, NanoGpt) {
  expect_checkpoints({"/home/u/nanoGPT/out/ckpt.pt", "/home/u/nanoGPT/out-shakespeare-char/ckpt.pt",
                      "out/ckpt.pt"});
}

// pytorch/examples imagenet/main.py: save_checkpoint() in the working
// directory, then shutil.copyfile to model_best.pth.tar.
TEST_F(FrameworkLayoutTest, TorchSaveImageNetExample) {
  expect_checkpoints(
      {"/home/u/imagenet/checkpoint.pth.tar", "/home/u/imagenet/model_best.pth.tar"});
}

// Plain torch.save under a directory the user named after checkpoints
// (DDP rank-0 saves, FSDP FULL_STATE_DICT / LOCAL_STATE_DICT per rank).
TEST_F(FrameworkLayoutTest, TorchSaveDdpAndFsdpFullStateDict) {
  expect_checkpoints({"/nfs/job/checkpoints/model_epoch3.pt", "/nfs/job/ckpts/rank0.pt",
                      "/nfs/job/checkpoints/step_100/rank_1.pth"});
}

// torch.distributed.checkpoint FileSystemWriter, as torchtitan uses it:
// outputs/checkpoint/step-1000/__{rank}_{n}.distcp, .metadata.tmp => .metadata.
TEST_F(FrameworkLayoutTest, DcpAndTorchtitan) {
  expect_checkpoints(
      {"/job/outputs/checkpoint/step-1000/__0_0.distcp",
       "/job/outputs/checkpoint/step-1000/__1_0.distcp",
       "/job/outputs/checkpoint/step-1000/.metadata.tmp",
       "/job/outputs/checkpoint/step-1000/.metadata",
       // last_save_in_hf: HuggingFaceStorageWriter into step-N/sharded/.
       "/job/outputs/checkpoint/step-1000/sharded/shard-00001-model-00001-of-00004.safetensors",
       // DCP anywhere: the shards say checkpoint by their extension.
       "/scratch/dcp_out/__0_0.distcp"});
}

// DeepSpeed engine.save_checkpoint: save_dir/global_step{N}/..., save_dir/latest.
TEST_F(FrameworkLayoutTest, DeepSpeedZero2) {
  expect_checkpoints({"/job/ckpt/global_step100/mp_rank_00_model_states.pt",
                      "/job/ckpt/global_step100/zero_pp_rank_0_mp_rank_00_optim_states.pt",
                      "/job/ckpt/global_step100/bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt",
                      "/job/ckpt/global_step100/layer_01-model_00-model_states.pt",
                      "/job/ckpt/latest"});
  // Copied beside the checkpoints for offline conversion: a Python source.
  expect_not_checkpoints({"/job/ckpt/zero_to_fp32.py"});
}

// save_checkpoint(dir, tag="best") under a directory with no checkpoint-ish
// name: the shard names say checkpoint themselves.
TEST_F(FrameworkLayoutTest, DeepSpeedZero3CustomTag) {
  expect_checkpoints({"/job/run1/best/zero_pp_rank_0_mp_rank_00_model_states.pt",
                      "/job/run1/best/zero_pp_rank_0_mp_rank_00_optim_states.pt",
                      "/job/run1/best/expp_rank_0_mp_rank_00_optim_states.pt"});
}

// Megatron-LM --ckpt-format torch: <save>/iter_{N:07d}/mp_rank_{tp:02d}[_{pp:03d}]/.
TEST_F(FrameworkLayoutTest, MegatronLegacy) {
  expect_checkpoints({"/job/checkpoints/gpt/iter_0000100/mp_rank_00/model_optim_rng.pt",
                      "/job/checkpoints/gpt/iter_0000100/mp_rank_00_001/distrib_optim.pt",
                      "/job/checkpoints/gpt/latest_checkpointed_iteration.txt",
                      "/data/gpt/iter_0000100/mp_rank_00/model_optim_rng.pt",
                      // Release checkpoints: `release/` is too generic a name to be a
                      // checkpoint directory, the shard names are distinctive.
                      "/data/gpt/release/mp_rank_00/model_optim_rng.pt"});
}

// Megatron-LM torch_dist (the default format): dist-checkpointing in iter_*/.
TEST_F(FrameworkLayoutTest, MegatronTorchDist) {
  expect_checkpoints({"/job/ckpts/iter_0000100/__0_0.distcp",
                      "/job/ckpts/iter_0000100/__0_1.distcp", "/job/ckpts/iter_0000100/.metadata",
                      "/job/ckpts/iter_0000100/common.pt", "/data/gpt/iter_0000100/__3_0.distcp"});
  expect_not_checkpoints({"/job/ckpts/iter_0000100/metadata.json"});  // text metadata
}

// transformers Trainer._save_checkpoint: <output_dir>/checkpoint-{step}/.
TEST_F(FrameworkLayoutTest, HuggingFaceTrainer) {
  expect_checkpoints(
      {"/job/out/checkpoint-500/model-00001-of-00002.safetensors",
       "/job/out/checkpoint-500/model-00002-of-00002.safetensors",
       "/job/out/checkpoint-500/optimizer.pt", "/job/out/checkpoint-500/scheduler.pt",
       "/job/out/checkpoint-500/rng_state_0.pth", "/job/out/checkpoint-500/rng_state.pth",
       "/job/out/checkpoint-500/training_args.bin", "/job/out/checkpoint-500/pytorch_model.bin",
       "/job/out/checkpoint-500/pytorch_model-00001-of-00002.bin",
       "/job/out/checkpoint-500/adapter_model.safetensors",
       // 4.36-4.38 and Feb 2025: a staging directory renamed at the end.
       "/job/out/tmp-checkpoint-500/optimizer.pt", "/job/out/tmp-checkpoint-500/model.safetensors",
       "/job/out/tmp-checkpoint-pe8ry7n_/optimizer.pt",
       // DeepSpeed inside the Trainer's folder.
       "/job/out/checkpoint-500/global_step500/mp_rank_00_model_states.pt"});
  EXPECT_TRUE(matcher_.is_checkpoint_dir("/job/out/tmp-checkpoint-500"));
  EXPECT_TRUE(matcher_.is_checkpoint_dir("/job/out/checkpoint-500"));
  expect_not_checkpoints({"/job/out/checkpoint-500/trainer_state.json",
                          "/job/out/checkpoint-500/model.safetensors.index.json",
                          "/job/out/checkpoint-500/config.json"});
}

// accelerate Accelerator.save_state: checkpoints/checkpoint_{i}/ with automatic
// naming, else the user's directory (the examples use step_{n} and epoch_{n}).
TEST_F(FrameworkLayoutTest, Accelerate) {
  expect_checkpoints({"/job/proj/checkpoints/checkpoint_0/model.safetensors",
                      "/job/proj/checkpoints/checkpoint_0/optimizer.bin",
                      "/job/proj/checkpoints/checkpoint_0/scheduler.bin",
                      "/job/proj/checkpoints/checkpoint_0/sampler.bin",
                      "/job/proj/checkpoints/checkpoint_0/scaler.pt",
                      "/job/proj/checkpoints/checkpoint_0/random_states_0.pkl",
                      "/job/proj/checkpoints/checkpoint_0/custom_checkpoint_0.pkl",
                      "/job/epoch_3/model.safetensors", "/job/epoch_3/optimizer.bin",
                      "/job/epoch_3/random_states_0.pkl", "/job/step_300/optimizer.bin",
                      "/job/epoch_3/pytorch_model_fsdp_0/__0_0.distcp",
                      "/job/epoch_3/pytorch_model_fsdp_0/.metadata",
                      "/job/epoch_3/optimizer_0/__0_0.distcp",
                      "/job/epoch_3/pytorch_model_fsdp_rank1.bin"});
}

// Lightning ModelCheckpoint: lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt;
// the DeepSpeed and FSDP strategies make the .ckpt a directory.
TEST_F(FrameworkLayoutTest, Lightning) {
  expect_checkpoints(
      {"/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100-v1.ckpt",
       "/job/lightning_logs/version_0/checkpoints/last.ckpt",
       "/job/root/checkpoints/epoch=2-step=300.ckpt",
       "/job/runs/epoch=0-step=100.ckpt",  // a dirpath of the user's own
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/checkpoint/"
       "mp_rank_00_model_states.pt",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/checkpoint/"
       "zero_pp_rank_0_mp_rank_00_optim_states.pt",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/latest",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/__0_0.distcp",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/.metadata",
       "/job/lightning_logs/version_0/checkpoints/epoch=0-step=100.ckpt/meta.pt"});
  // Lightning >= 2.4 writes through an fsspec transaction: the bytes go to
  // mkstemp()'s name first, which says nothing; only the rename (or copy) to
  // the .ckpt is seen as the checkpoint's (docs/frameworks.md: known gaps).
  expect_not_checkpoints({"/tmp/tmpab12cd34", "/job/lightning_logs/version_0/hparams.yaml",
                          "/job/lightning_logs/version_0/events.out.tfevents.1700000000.node.1.0"});
}

// torchtune checkpointers: <output_dir>/epoch_{n}/ (or step_{n}/), and the Meta
// checkpointer's <output_dir>/recipe_state/recipe_state.pt.
TEST_F(FrameworkLayoutTest, Torchtune) {
  expect_checkpoints(
      {"/tmp/torchtune/llama3_2_1B/full/epoch_0/model-00001-of-00002.safetensors",
       "/tmp/torchtune/llama3_2_1B/full/epoch_0/model-00002-of-00002.safetensors",
       "/tmp/torchtune/llama3_2_1B/full/epoch_0/adapter_model.pt",
       "/tmp/torchtune/llama3_2_1B/full/epoch_0/adapter_model.safetensors",
       "/tmp/torchtune/llama3_2_1B/full/epoch_0/recipe_state.pt",
       "/job/output/epoch_0/model-00001-of-00001.bin", "/job/output/recipe_state/recipe_state.pt",
       "/job/output/step_1000/model-00001-of-00001.bin", "/job/output/epoch_1/__0_0.distcp"});
  expect_not_checkpoints({"/job/output/epoch_0/adapter_config.json",
                          "/job/output/epoch_0/model.safetensors.index.json"});
}

// NeMo 1 save_to("x.nemo"): model_weights.ckpt in a TemporaryDirectory, then
// tarred into the .nemo.
TEST_F(FrameworkLayoutTest, NeMo1) {
  expect_checkpoints({"/tmp/tmpq1w2e3/model_weights.ckpt",
                      "/tmp/tmpq1w2e3/mp_rank_00/model_weights.ckpt",
                      "/job/results/megatron_gpt.nemo", "/job/results/model.nemo"});
  expect_not_checkpoints({"/tmp/tmpq1w2e3/model_config.yaml"});
}

// NeMo 2 (nemo.lightning): log_dir/checkpoints/<name>/weights/ (Megatron
// dist-checkpointing) and context/.
TEST_F(FrameworkLayoutTest, NeMo2) {
  const std::string ckpt =
      "/job/results/exp/checkpoints/megatron_gpt--val_loss=2.34-step=999-consumed_samples=64000.0"
      "-last";
  expect_checkpoints({ckpt + "/weights/__0_0.distcp", ckpt + "/weights/__1_0.distcp",
                      ckpt + "/weights/.metadata", ckpt + "/weights/common.pt"});
  expect_not_checkpoints({ckpt + "/context/io.json", ckpt + "/context/model.yaml"});
}

// Keras 3: model.save("x.keras"), save_weights("x.weights.h5"), ModelCheckpoint
// with and without save_weights_only.
TEST_F(FrameworkLayoutTest, Keras) {
  expect_checkpoints({"/tmp/ckpt/checkpoint.model.keras", "/tmp/ckpt/checkpoint.weights.h5",
                      "/job/runs/03-0.42.keras", "/job/runs/model.weights.h5",
                      "/job/checkpoints/legacy_model.h5"});
  // Short of memory, the weights go to NamedTemporaryFile(dir=<the .keras's
  // directory>) first and are copied into the .keras: that name says nothing.
  expect_not_checkpoints({"/job/runs/tmpk3j2h1"});
}

// JAX Orbax CheckpointManager: <root>/<step>/<item>/ written as
// <step>.orbax-checkpoint-tmp/<item>.orbax-checkpoint-tmp/, TensorStore OCDBT
// files under ocdbt.process_<i>/, each written as <key>.__lock and renamed.
TEST_F(FrameworkLayoutTest, Orbax) {
  const std::string tmp = "/data/run1/100.orbax-checkpoint-tmp";
  expect_checkpoints(
      {tmp + "/state.orbax-checkpoint-tmp/ocdbt.process_0/d/3f9a0c1e2b.__lock",
       tmp + "/state.orbax-checkpoint-tmp/ocdbt.process_0/d/3f9a0c1e2b",
       tmp + "/state.orbax-checkpoint-tmp/ocdbt.process_0/manifest.ocdbt.__lock",
       tmp + "/state.orbax-checkpoint-tmp/ocdbt.process_0/manifest.ocdbt",
       tmp + "/state.orbax-checkpoint-tmp/_METADATA", tmp + "/state.orbax-checkpoint-tmp/_sharding",
       tmp + "/state.orbax-checkpoint-tmp/manifest.ocdbt",
       tmp + "/state.orbax-checkpoint-tmp/d/77aa01", tmp + "/_CHECKPOINT_METADATA",
       // Before 2025-07 the temporary name carried a counter.
       "/data/run1/100.orbax-checkpoint-tmp-7/default/d/9b1c",
       // The load, after the renames: the per-process directory says OCDBT.
       "/data/run1/100/state/ocdbt.process_0/d/3f9a0c1e2b",
       // A step number under a checkpoint directory.
       "/data/checkpoints/100/state/d/3f9a0c1e2b", "/data/checkpoints/100/default/_METADATA",
       // The old msgpack format: a file named `checkpoint`.
       "/data/flax_run/checkpoint_100/checkpoint"});
  EXPECT_TRUE(matcher_.is_checkpoint_dir(tmp + "/state.orbax-checkpoint-tmp"));
  // A single-process load from a root of no checkpoint-ish name reads
  // <root>/100/state/d/<hex>: nothing in that path says checkpoint, so it
  // takes --checkpoint-dir ROOT (docs/frameworks.md: known gaps).
  expect_not_checkpoints({"/data/run1/100/state/d/3f9a0c1e2b"});
}

// What a trainer also reads and writes that is no checkpoint, though its name
// or place looks like one.
TEST_F(FrameworkLayoutTest, MustStayFalse) {
  expect_not_checkpoints({
      "/usr/lib/python3/site-packages/torch/lib/weights.pt",
      "/usr/lib/python3/site-packages/torch/utils/checkpoint.py",
      "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py",
      "/usr/lib/python3/dist-packages/torch/distributed/checkpoint/_checkpointer.py",
      "/venv/lib/python3.12/site-packages/torch/distributed/checkpoint/metadata.pt",
      "/venv/lib/python3.12/site-packages/lightning/pytorch/callbacks/__pycache__/"
      "model_checkpoint.cpython-312.pyc",
      "/src/DeepSpeed/deepspeed/runtime/checkpoint_engine/checkpoint_engine.py",
      "/src/DeepSpeed/deepspeed/runtime/checkpoint_engine/__pycache__/"
      "checkpoint_engine.cpython-312.pyc",
      "/src/ext/_checkpoint_ops.so",
      "/src/ext/libckpt.so.1",
      "/nfs/job/checkpoint-3/train.log",
      "/job/ckpt_save.log",
      "/job/data/my-gpt2_text_document.bin",
      "/job/data/my-gpt2_text_document.idx",
      "/home/u/.cache/huggingface/hub/models--gpt2/blobs/"
      "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707",
      // The hub cache's snapshots link to those blobs: a downloaded
      // pretrained model every job shares, not this job's checkpoint.
      "/home/u/.cache/huggingface/hub/models--gpt2/snapshots/"
      "607a30d783dfa663caf39e06633721c8d4cfcd7e/"
      "model.safetensors",
      "/data/hf_cache/models--meta-llama--Llama-3.2-1B/snapshots/4e20de36/model.safetensors",
      "/etc/hosts",
      "/job/runs/notes",
      "/home/u/notebooks/.ipynb_checkpoints/train-checkpoint.ipynb",
      // ckptscope's own files say "ckpt" too, even in a clone under a
      // checkpoint-ish name (the workload binary is mapped by the job it runs).
      "/home/u/ckptscope/build/bin/ckptscope-workload",
      "/home/u/ckptscope/build/bin/ckptscope",
      "/home/u/ckptscope-2026-12-01-4242.db",
  });
  // ...but a directory of ours holds real checkpoints (`demo`'s scratch one).
  expect_checkpoints({"/home/u/ckptscope/ckptscope-demo-Ab12Cd/checkpoint-1/shard-0.pt",
                      "/tmp/ckptscope-test-Xy9/model.pt"});
  EXPECT_FALSE(
      matcher_.is_checkpoint_dir("/usr/lib/python3/site-packages/torch/distributed/checkpoint"));
  EXPECT_FALSE(matcher_.is_checkpoint_dir("/job/data"));
}

}  // namespace
}  // namespace ckpt
