import torch

torch.zeros(1).cuda()
