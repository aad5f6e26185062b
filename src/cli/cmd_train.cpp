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

// The command line's choices; zero / negative values keep DefaultTrainerConfig's.
struct TrainArgs {
  std::string model_name = "bahdanau", task_name = "en-fr", out_path;
  float seconds = 30.0f, lr = 0.0f, align_weight = -1.0f;
  int seed = 1, max_epochs = 1000, batch = 0, n_train = 0, n_heldout = 0, decay = -1, warmup = -1;
  int dec_hidden = 0, enc_hidden = 0;
  bool half = false, checkpoint = false;
};

void DeclareFlags(attnviz::ArgParser* args, TrainArgs* a) {
  args->String("--model", &a->model_name, "KIND", "bahdanau, luong or transformer (default bahdanau)");
  args->String("--task", &a->task_name, "TASK", "en-fr, dates or es-en (default en-fr)");
  args->Float("--seconds", &a->seconds, "N",
              "training time budget; no epoch is started that would overrun it (default 30)");
  args->Int("--seed", &a->seed, "S", "seed of the corpus, the weights and the shuffling (default 1)");
  args->Int("--epochs", &a->max_epochs, "N", "stop after N epochs (default 1000)");
  args->Int("--batch", &a->batch, "N", "sentences per batch (default 32)");
  args->Int("--train-size", &a->n_train, "N", "training pairs (default 10000 for en-fr, else 6000)");
  args->Int("--heldout-size", &a->n_heldout, "N", "held-out pairs (default 400)");
  args->Float("--lr", &a->lr, "X", "Adam learning rate (default: the task's and model's, see DefaultTrainerConfig)");
  args->Int("--dec-hidden", &a->dec_hidden, "N", "bahdanau, luong: decoder GRU size (default 64)");
  args->Int("--enc-hidden", &a->enc_hidden, "N",
            "bahdanau, luong: encoder GRU size per direction (default 48; luong 32)");
  args->Int("--warmup", &a->warmup, "N", "updates of linear learning-rate warm-up (default: the model's)");
  args->Int("--decay", &a->decay, "N", "after N updates the learning rate decays as sqrt(N / update); 0: constant");
  args->Float("--align-weight", &a->align_weight, "X",
              "weight of the alignment loss: the Transformer's supervised head (default 1; 0: none), the RNN "
              "models' attention (guided alignment; default 0)");
  args->String("--out", &a->out_path, "FILE", "write the trained model here");
  args->Flag("--half", &a->half, "store weights as float16 (half the file size)");
  args->Flag("--checkpoint", &a->checkpoint, "also write --out after every epoch (a stopped run keeps its last epoch)");
}

TrainerConfig BuildConfig(const TrainArgs& a, ModelKind kind, Task task) {
  TrainerConfig config = DefaultTrainerConfig(kind, task, static_cast<uint64_t>(a.seed));
  if (a.dec_hidden > 0) config.model.dec_hidden = a.dec_hidden;
  if (a.enc_hidden > 0) config.model.enc_hidden = a.enc_hidden;
  if (a.batch > 0) config.batch_size = a.batch;
  if (a.n_train > 0) config.n_train = a.n_train;
  if (a.n_heldout > 0) config.n_heldout = a.n_heldout;
  if (a.lr > 0) config.learning_rate = a.lr;
  if (a.align_weight >= 0) config.align_weight = a.align_weight;
  if (a.decay >= 0) config.decay_batches = a.decay;
  if (a.warmup >= 0) config.warmup_batches = a.warmup;
  if (config.align_weight == 0) config.model.align_layer = config.model.align_head = -1;
  return config;
}

int Fail(const attnviz::Status& st) {
  std::fprintf(stderr, "attnviz-cli train: %s\n", st.message.c_str());
  return attnviz::kExitError;
}

// Trains epoch by epoch (one JSON line each) within the budget; writes the model.
int TrainAndSave(const TrainArgs& a, const TrainerConfig& config) {
  Trainer trainer;
  attnviz::Status st = trainer.Init(config);
  if (!st) return Fail(st);
  std::fprintf(stderr, "train: %s on %s, %lld weights, %zu train / %zu held-out pairs, seed %d\n", a.model_name.c_str(),
               a.task_name.c_str(), static_cast<long long>(trainer.model().NumWeights()), trainer.corpus().train.size(),
               trainer.corpus().heldout.size(), a.seed);
  if (HasSupervisedHead(config.model))
    std::fprintf(stderr, "train: decoder layer %d, head %d learns the gold alignment (weight %g)\n",
                 config.model.align_layer + 1, config.model.align_head + 1, static_cast<double>(config.align_weight));
  else if (config.align_weight > 0 && config.model.kind != ModelKind::Transformer)
    std::fprintf(stderr, "train: the attention is guided towards the gold alignment (weight %g)\n",
                 static_cast<double>(config.align_weight));
  double last_epoch_seconds = 0;
  size_t bytes = 0;
  while (trainer.epoch() < a.max_epochs) {
    if (trainer.seconds() + last_epoch_seconds > a.seconds) break;
    const double before = trainer.seconds();
    trainer.RunEpoch();
    last_epoch_seconds = trainer.seconds() - before;
    std::printf("%s\n", EpochJson(trainer.history().back(), trainer.probes().back().aer).c_str());
    std::fflush(stdout);
    if (a.checkpoint && !a.out_path.empty() && !(st = SaveModelFile(trainer.model(), a.half, a.out_path, &bytes)))
      return Fail(st);
  }
  if (a.out_path.empty()) return attnviz::kExitOk;
  if (!(st = SaveModelFile(trainer.model(), a.half, a.out_path, &bytes))) return Fail(st);
  std::fprintf(stderr, "train: wrote %s (%zu bytes)\n", a.out_path.c_str(), bytes);
  return attnviz::kExitOk;
}

int RunTrain(int argc, char** argv) {
  TrainArgs a;
  attnviz::ArgParser args("train", "train a translation model (bahdanau | luong | transformer) on a generated corpus");
  DeclareFlags(&args, &a);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  ModelKind kind;
  Task task;
  if (!ParseModelKind(a.model_name, &kind)) return args.UsageError("unknown --model '" + a.model_name + "'");
  if (!ParseTask(a.task_name, &task)) return args.UsageError("unknown --task '" + a.task_name + "'");
  if (!(a.seconds > 0)) return args.UsageError("--seconds must be > 0");
  if (a.seed < 0) return args.UsageError("--seed must be >= 0");
  return TrainAndSave(a, BuildConfig(a, kind, task));
}

}  // namespace

ATTNVIZ_CLI_COMMAND(train, "train a translation model (bahdanau|luong|transformer) on en-fr, dates or es-en", RunTrain)
