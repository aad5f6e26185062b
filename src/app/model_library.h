// attnviz app: the translation models the Translate view can use. Pretrained ones are embedded
// at build time (models/*.bin, loaded on first use); the Train view adds the model it trains.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/seq2seq/model.h"
#include "core/status.h"

namespace attnviz {

struct ModelSlot {
  std::string label;        // menu text, e.g. "Bahdanau (additive), pretrained"
  std::string file;         // embedded file name ("" for the model trained in this session)
  bool loaded = false;      // model holds the weights
  std::string error;        // why loading failed, if it did
  seq2seq::Model model;     // the weights
  size_t remote_bytes = 0;  // > 0: not embedded; fetched from models/<file> when first needed (web build)
  bool fetching = false;    // a fetch of the file is under way
};

struct ModelLibrary {
  std::vector<ModelSlot> slots;  // pretrained models (Bahdanau first), then the trained one if any
  int slot = 0;                  // the model chosen for translation

  std::vector<std::string> fetch_requests;  // files the platform should fetch ("models/<file>")

  // One slot per en-fr model, not yet loaded: embedded ones, or those listed in the embedded
  // models.index (the web build fetches them when first needed).
  void ListEmbedded();
  ModelSlot* Chosen();  // slots[slot] (clamped), nullptr when there is none
  // Loads the model on first use. A model still to be fetched starts its fetch, sets
  // slot->fetching and fails with "loading ..."; Deliver() completes it.
  Status EnsureLoaded(ModelSlot* slot);
  // The bytes (or the error) of a fetched model file; returns false if no slot asked for it.
  bool Deliver(const std::string& url, const uint8_t* data, size_t size, const std::string& error);
  // Puts a model trained in this session into its own slot (added once, then replaced) and chooses it.
  void PublishTrained(const seq2seq::Model& model, const std::string& label);
};

}  // namespace attnviz
