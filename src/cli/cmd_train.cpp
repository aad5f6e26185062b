// attnviz-cli train: trains a seq2seq model on a generated corpus, one JSON line per epoch.
//
//   attnviz-cli train --model bahdanau --task en-fr --seconds 30 --seed 1 --out models/bahdanau-en-fr.bin
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/seq2seq/trainer.h"

namespace {

using namespace attnviz::seq2seq;

bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

int RunTrain(int argc, char** argv) {
  std::string model_name = "bahdanau", task_name = "en-fr", out_path;
  float seconds = 30.0f, lr = 0.0f;
  int seed = 1, max_epochs = 1000, batch = 0, n_train = 0, n_heldout = 0;
  bool half = false;
  attnviz::ArgParser args("train", "train a translation model (bahdanau | luong | transformer) on a generated corpus");
  args.String("--model", &model_name, "KIND", "bahdanau, luong or transformer (default bahdanau)");
  args.String("--task", &task_name, "TASK", "en-fr or dates (default en-fr)");
  args.Float("--seconds", &seconds, "N", "training time budget; no epoch is started that would overrun it (default 30)");
  args.Int("--seed", &seed, "S", "seed of the corpus, the weights and the shuffling (default 1)");
  args.Int("--epochs", &max_epochs, "N", "stop after N epochs (default 1000)");
  args.Int("--batch", &batch, "N", "sentences per batch (default 32)");
  args.Int("--train-size", &n_train, "N", "training pairs (default 6000)");
  args.Int("--heldout-size", &n_heldout, "N", "held-out pairs (default 400)");
  args.Float("--lr", &lr, "X", "Adam learning rate (default 0.003; transformer 0.002)");
  args.String("--out", &out_path, "FILE", "write the trained model here");
  args.Flag("--half", &half, "store weights as float16 (half the file size)");
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  ModelKind kind;
  Task task;
  if (!ParseModelKind(model_name, &kind)) return args.UsageError("unknown --model '" + model_name + "'");
  if (!ParseTask(task_name, &task)) return args.UsageError("unknown --task '" + task_name + "'");
  if (!(seconds > 0)) return args.UsageError("--seconds must be > 0");
  if (seed < 0) return args.UsageError("--seed must be >= 0");

  TrainerConfig config = DefaultTrainerConfig(kind, task, static_cast<uint64_t>(seed));
  if (batch > 0) config.batch_size = batch;
  if (n_train > 0) config.n_train = n_train;
  if (n_heldout > 0) config.n_heldout = n_heldout;
  if (lr > 0) config.learning_rate = lr;
  Trainer trainer;
  attnviz::Status st = trainer.Init(config);
  if (!st) {
    std::fprintf(stderr, "attnviz-cli train: %s\n", st.message.c_str());
    return attnviz::kExitError;
  }
  std::fprintf(stderr, "train: %s on %s, %lld weights, %zu train / %zu held-out pairs, seed %d\n", model_name.c_str(),
               task_name.c_str(), static_cast<long long>(trainer.model().NumWeights()), trainer.corpus().train.size(),
               trainer.corpus().heldout.size(), seed);
  double last_epoch_seconds = 0;
  while (trainer.epoch() < max_epochs) {
    if (trainer.seconds() + last_epoch_seconds > seconds) break;
    const double before = trainer.seconds();
    trainer.RunEpoch();
    last_epoch_seconds = trainer.seconds() - before;
    const EpochStats& s = trainer.history().back();
    std::printf(
        "{\"epoch\":%d,\"loss\":%.5f,\"heldout_loss\":%.5f,\"exact_match\":%.4f,\"token_accuracy\":%.4f,\"aer\":%.4f,"
        "\"aer_threshold\":%.4f,\"probe_aer\":%.4f,\"seconds\":%.2f,\"batches\":%lld}\n",
        s.epoch, s.loss, s.heldout_loss, s.exact_match, s.token_accuracy, s.aer, s.aer_threshold,
        trainer.probes().back().aer, s.seconds, static_cast<long long>(s.batches));
    std::fflush(stdout);
  }
  if (!out_path.empty()) {
    std::vector<uint8_t> bytes;
    st = SaveModel(trainer.model(), &bytes, half);
    if (!st || !WriteFile(out_path, bytes)) {
      std::fprintf(stderr, "attnviz-cli train: cannot write %s%s%s\n", out_path.c_str(), st ? "" : ": ",
                   st.message.c_str());
      return attnviz::kExitError;
    }
    std::fprintf(stderr, "train: wrote %s (%zu bytes)\n", out_path.c_str(), bytes.size());
  }
  return attnviz::kExitOk;
}

}  // namespace

ATTNVIZ_CLI_COMMAND(train, "train a translation model (bahdanau|luong|transformer) on en-fr or dates", RunTrain)
