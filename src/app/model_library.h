// attnviz app: the translation models the Translate view can use. Pretrained ones are embedded
// at build time (models/*.bin, loaded on first use); the Train view adds the model it trains.
#pragma once
#include <string>
#include <vector>

#include "core/seq2seq/model.h"
#include "core/status.h"

namespace attnviz {

struct ModelSlot {
  std::string label;     // menu text, e.g. "Bahdanau (additive), pretrained"
  std::string file;      // embedded file name ("" for the model trained in this session)
  bool loaded = false;   // model holds the weights
  std::string error;     // why loading failed, if it did
  seq2seq::Model model;  // the weights
};

struct ModelLibrary {
  std::vector<ModelSlot> slots;  // pretrained models (Bahdanau first), then the trained one if any
  int slot = 0;                  // the model chosen for translation

  void ListEmbedded();                   // one slot per embedded en-fr model, not yet loaded
  ModelSlot* Chosen();                   // slots[slot] (clamped), nullptr when there is none
  Status EnsureLoaded(ModelSlot* slot);  // loads an embedded model on first use
  // Puts a model trained in this session into its own slot (added once, then replaced) and chooses it.
  void PublishTrained(const seq2seq::Model& model, const std::string& label);
};

}  // namespace attnviz
