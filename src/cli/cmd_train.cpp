// attnviz-cli train: trains a seq2seq model on a generated corpus, one JSON line per epoch.
//
//   attnviz-cli train --model bahdanau --task en-fr --seconds 30 --seed 1 --out models/bahdanau-en-fr.bin
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/seq2seq/trainer.h"
#include "io/file_util.h"
#include "io/json.h"

namespace {

using namespace attnviz::seq2seq;

// One JSON line per epoch: epoch, loss, heldout_loss, exact_match, token_accuracy, aer,
// aer_threshold, probe_aer, seconds, batches (docs/MODELS.md). NaN (a diverged loss) is null.
std::string EpochJson(const EpochStats& s, double probe_aer) {
  attnviz::JsonWriter w;
  auto fixed = [&w](const char* key, double v, int decimals) {
    w.Key(key);
    w.NumberFixed(v, decimals);
  };
  w.BeginObject();
  w.Key("epoch");
  w.Number(s.epoch);
  fixed("loss", s.loss, 5);
  fixed("heldout_loss", s.heldout_loss, 5);
  fixed("exact_match", s.exact_match, 4);
  fixed("token_accuracy", s.token_accuracy, 4);
  fixed("aer", s.aer, 4);
  fixed("aer_threshold", s.aer_threshold, 4);
  fixed("probe_aer", probe_aer, 4);
  fixed("seconds", s.seconds, 2);
  w.Key("batches");
  w.Number(static_cast<double>(s.batches));
  w.EndObject();
  return w.str();
}

// Saves the model (float16 weights with --half) to path.
attnviz::Status SaveModelFile(const Model& model, bool half, const std::string& path, size_t* bytes_written) {
  std::vector<uint8_t> bytes;
  attnviz::Status st = SaveModel(model, &bytes, half);
  if (!st) return attnviz::Status::Error("cannot write " + path + ": " + st.message);
  *bytes_written = bytes.size();
  return attnviz::WriteFileBytes(path, bytes.data(), bytes.size());
}

int RunTrain(int argc, char** argv) {
  std::string model_name = "bahdanau", task_name = "en-fr", out_path;
  float seconds = 30.0f, lr = 0.0f;
  int seed = 1, max_epochs = 1000, batch = 0, n_train = 0, n_heldout = 0;
  bool half = false;
  attnviz::ArgParser args("train", "train a translation model (bahdanau | luong | transformer) on a generated corpus");
  args.String("--model", &model_name, "KIND", "bahdanau, luong or transformer (default bahdanau)");
  args.String("--task", &task_name, "TASK", "en-fr or dates (default en-fr)");
  args.Float("--seconds", &seconds, "N",
             "training time budget; no epoch is started that would overrun it (default 30)");
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
    std::printf("%s\n", EpochJson(trainer.history().back(), trainer.probes().back().aer).c_str());
    std::fflush(stdout);
  }
  if (!out_path.empty()) {
    size_t bytes = 0;
    if (!(st = SaveModelFile(trainer.model(), half, out_path, &bytes))) {
      std::fprintf(stderr, "attnviz-cli train: %s\n", st.message.c_str());
      return attnviz::kExitError;
    }
    std::fprintf(stderr, "train: wrote %s (%zu bytes)\n", out_path.c_str(), bytes);
  }
  return attnviz::kExitOk;
}

}  // namespace

ATTNVIZ_CLI_COMMAND(train, "train a translation model (bahdanau|luong|transformer) on en-fr or dates", RunTrain)
