#include <torch/torch.h>  // the ground module must not see torch
